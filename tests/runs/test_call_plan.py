"""A dry run's call plan: calls and tokens per role, priced."""


from personalens.runs.call_plan import CallPlan, estimated_tokens


def test_a_plan_adds_calls_and_tokens_per_role_and_prices_them():
    plan = CallPlan("x eval", 3, "items")
    plan.add("target", 2, 100, 10)
    plan.add("target", 1, 50, 5)
    plan.add("judge", 4, 1000, 0)
    assert plan.usage() == {"judge": {"requests": 4, "prompt_tokens": 1000,
                                      "completion_tokens": 0},
                            "target": {"requests": 3, "prompt_tokens": 150,
                                       "completion_tokens": 15}}
    # USD per million tokens in and out: target 150 in at $2, 15 out at $10; judge 1000 in at $1.
    prices = {"target": (2.0, 10.0), "judge": (1.0, 0.0)}
    assert plan.cost(prices) == (150 * 2 + 15 * 10 + 1000 * 1) / 1e6
    assert plan.cost({}) is None
    assert estimated_tokens("abcde") == 2 and estimated_tokens(8) == 2
