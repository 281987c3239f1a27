"""PRISK: the hidden costs of personalisation (irrelevant details, narrowing, sycophancy)."""
