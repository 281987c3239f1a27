"""Plots never draw a missing score as 0, and say "nothing scored" instead of empty axes."""




def _texts(fig) -> list[str]:
    import matplotlib.pyplot as plt

    texts = [t.get_text() for t in fig.axes[0].texts]
    plt.close(fig)
    return texts


def _bar_heights(fig) -> list[float]:
    return [patch.get_height() for patch in fig.axes[0].patches]


def test_a_missing_bar_is_marked_n_a_and_not_drawn_as_zero():
    from personalens.report.plots import draw_grouped_bars

    fig = draw_grouped_bars({"bm25": {"a": 0.5, "b": None}, "minilm": {"a": 0.0, "b": 0.25}},
                            "recall", "t")
    assert sorted(_bar_heights(fig)) == [0.0, 0.25, 0.5]  # a real 0 is a bar; None is not
    assert _texts(fig) == ["n/a"]


def test_plots_with_nothing_scored_say_so():
    from personalens.report.plots import NOTHING_SCORED, draw_grouped_bars, draw_line_plot

    assert _texts(draw_grouped_bars({"bm25": {"a": None}}, "recall", "t")) == ["n/a",
                                                                              NOTHING_SCORED]
    assert _texts(draw_grouped_bars({}, "recall", "t")) == [NOTHING_SCORED]
    assert _texts(draw_line_plot({"x": [(1.0, None), (2.0, float("nan"))]}, "k", "y", "t")) \
        == [NOTHING_SCORED]
    assert _texts(draw_line_plot({"x": [(1.0, 0.0)]}, "k", "y", "t")) == []
