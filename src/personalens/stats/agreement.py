"""Agreement between judges scoring the same units: weighted kappa for two, Krippendorff's
alpha (ordinal) for more. Units a judge could not score are missing, not guessed."""

import numpy as np

SCALE = (1, 5)  # the rubric scale: kappa's quadratic weights count steps on it


def judge_agreement(ratings: np.ndarray) -> dict:
    """`ratings`: (judges, units), NaN where a judge gave no valid score.

    Two judges: quadratic-weighted Cohen's kappa (scikit-learn) over the units both scored.
    More, or any score off the integer scale (release scoring uses a 4.5 as it is): Krippendorff's
    ordinal alpha (the `krippendorff` package), which handles missing values and ranks whatever
    values occur; kappa's categories are the scale's integers, and truncating 4.5 to 4 would
    count a disagreement as agreement.
    """
    ratings = np.asarray(ratings, dtype=float)
    judges = ratings.shape[0]
    if judges < 2:
        raise ValueError("agreement needs at least two judges")
    both = ~np.isnan(ratings).any(axis=0)  # kappa's units: scored by both judges
    if judges == 2 and np.array_equal(ratings[:, both], np.round(ratings[:, both])):
        from sklearn.metrics import cohen_kappa_score
        a, b = ratings[0, both], ratings[1, both]
        if both.sum() < 2 or (len(set(a)) == 1 and len(set(b)) == 1 and a[0] == b[0]):
            value = None  # one value everywhere: chance agreement is total, kappa undefined
        else:
            a, b = a.astype(int), b.astype(int)
            # Every level of the scale, seen or not: 2 -> 5 is three steps even when no judge
            # gave a 3 or a 4 (by default scikit-learn weighs only the labels that occur).
            labels = list(range(min(SCALE[0], a.min(), b.min()),
                                max(SCALE[1], a.max(), b.max()) + 1))
            value = float(cohen_kappa_score(a, b, labels=labels, weights="quadratic"))
        return {"method": "weighted_kappa", "value": value, "n": int(both.sum())}
    import krippendorff
    scored = (~np.isnan(ratings)).sum(axis=0) >= 2
    try:
        value = float(krippendorff.alpha(reliability_data=ratings[:, scored],
                                         level_of_measurement="ordinal"))
    except (ValueError, ZeroDivisionError):
        value = None
    return {"method": "krippendorff_alpha", "value": value, "n": int(scored.sum())}
