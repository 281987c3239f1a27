"""A command group that runs its default command when the first word names none of its
commands: `personalens judge-audit RUN` is `personalens judge-audit run RUN`."""

from typer.core import TyperGroup


class DefaultCommandGroup(TyperGroup):
    default = "run"

    def parse_args(self, ctx, args):
        if args and args[0] not in self.commands and args[0] not in ctx.help_option_names:
            args = [self.default, *args]
        return super().parse_args(ctx, args)
