"""The generation sections of report.html: quality warnings first, what was made and how it
was checked, then each community to look at (graph, people, sessions)."""

from dataclasses import dataclass
from pathlib import Path

from personalens.population.generated_community import generated_communities, read_generated
from personalens.population.population_page import STYLE, community_section
from personalens.population.quality import HIGH_SHARE, RULES, Quality, assess, high_rules
from personalens.population.release_check import release_problems
from personalens.report import HtmlReport, Markup, tag

FLAGGED_LISTED = 50  # flagged values and sessions listed per community and rule


@dataclass(frozen=True)
class SurveyedCommunity:
    """What the metrics and the report need of one written community, drawn once."""

    name: str
    quality: Quality
    problems: list[str]  # release_check's, [] when it passes
    section: Markup  # population_page.community_section


def survey(out: Path, names: list[str]) -> list[SurveyedCommunity]:
    """Each named community whose files are complete, read, assessed, checked and drawn, one
    community in memory at a time (the first one's section open)."""
    written = set(generated_communities(out))
    surveyed = []
    for name in (n for n in names if n in written):
        community = read_generated(out, name)
        quality = assess(community)
        problems = release_problems(community.release, community.noise, community.graph)
        surveyed.append(SurveyedCommunity(name, quality, problems, community_section(
            community, quality, problems, open_=not surveyed)))
    return surveyed


def report_sections(report: HtmlReport, communities: dict[str, dict],
                    surveyed: list[SurveyedCommunity]) -> None:
    """`communities` are the run's metrics per community (generate.GenerationMetrics)."""
    report.stylesheet(STYLE)
    _warnings(report, communities, surveyed)
    _counts(report, communities)
    report.heading("The communities")
    report.paragraph("Each community's social graph, its validation, a card per person (click "
                     "to open), sample sessions of each document type and an outdated value "
                     "beside its update. Only the first community is open.")
    for community in surveyed:
        report.markup(community.section)


def _share(flagged: int, checked: int) -> str:
    return f"{flagged} of {checked}" + (f" ({flagged / checked:.0%})" if checked else "")


def _warnings(report: HtmlReport, communities: dict[str, dict],
              surveyed: list[SurveyedCommunity]) -> None:
    report.heading("Quality warnings")
    report.paragraph(
        "What to know before trusting this data: reveals the model did not write (the fallback "
        "line wrote them), profile values naming a member of the community where the attribute "
        "is not a person, and sessions of degenerate repetition (the most frequent word a third "
        "of the words, or a quarter of the word trigrams repeated). "
        f"HIGH marks a share of {HIGH_SHARE:.0%} or more.")
    rows = []
    for name, stats in communities.items():
        counts = stats.get("quality")
        if counts is None:
            continue
        high = high_rules(counts)
        rows.append([name, *(_share(counts[f], counts[c]) + (" HIGH" if f in high else "")
                             for f, c, _ in RULES)])
    report.table(["community", *(what for _, _, what in RULES)], rows)
    for community in surveyed:
        quality = community.quality
        listed = [tag("li", f"{w.person}: {w.attribute.replace('_', ' ')} is {w.value!r}, "
                            f"which names {w.names}") for w in quality.wrong_values]
        listed += [tag("li", f"{s.person}: {s.kind.replace('_', ' ')} session {s.segment_id} "
                             "is degenerate repetition") for s in quality.degenerate]
        if listed:
            report.markup(tag("details", tag("summary", f"{community.name}: the flagged "
                                                        "values and sessions"),
                              tag("ul", listed[:2 * FLAGGED_LISTED])))


def _counts(report: HtmlReport, communities: dict[str, dict]) -> None:
    report.heading("Communities")
    rows = []
    for name, stats in communities.items():
        if "failed" in stats:
            rows.append([name, "failed: " + stats["failed"], None, None, None, None, None,
                         None])
            continue
        rows.append([name, stats["people"], stats["questions"], stats["personal_sessions"],
                     stats["revealed_by_model"], stats["revealed_by_fallback"],
                     stats["noise_replaced_for_leaks"], stats["written_by_code"]])
    report.table(["community", "people", "questions", "personal sessions",
                  "revealed by the model", "revealed by fallback line",
                  "noise sessions replaced (leaks)", "sessions written by code (model failed)"],
                 rows)
    report.heading("Sessions per noise level", level=3)
    report.table(["community", "noise", "sessions", "utterances"],
                 [[name, noise, level["sessions"], level["utterances"]]
                  for name, stats in communities.items() if "levels" in stats
                  for noise, level in stats["levels"].items()])
    fixes = [(name, fix) for name, stats in communities.items()
             for fix in stats.get("fixes", [])]
    report.heading("Fixes applied in code", level=3)
    report.table(["community", "fix"], fixes) if fixes else report.paragraph("None.")

