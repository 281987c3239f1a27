"""PQB syntactic profiles: rule features, the contrastive encoder, user Gaussians, pair choice."""

from collections import Counter

import numpy as np
import pytest
from scipy.spatial.distance import mahalanobis
from scipy.stats import multivariate_normal

from personalens.lenses.pqb.pair_selection import SelectionOptions, belongs, select_pair
from personalens.lenses.pqb.spacy_pipeline import load_pipeline
from personalens.lenses.pqb.syntax_features import FeatureSpace, sentence_rules, text_rules
from personalens.lenses.pqb.user_gaussians import (
    CHI2_95_16,
    Gaussian,
    bhattacharyya,
    chi2_region,
    fit_full,
    fit_low_rank,
)

# ---- rule features (parses checked once by hand against en_core_web_sm 3.8) -------------------

# I/PRON <-nsubj- love/VERB(ROOT); this/DET <-det- guitar/NOUN <-dobj- love; ./PUNCT <-punct- love
I_LOVE_THIS_GUITAR = Counter({
    "D3|VERB|nsubj|PRON": 1, "D3|NOUN|det|DET": 1, "D3|VERB|dobj|NOUN": 1,
    "D3|VERB|punct|PUNCT": 1,
    "D4|VERB|NOUN|det|DET": 1,  # this -> guitar -> love: the only token whose head is not ROOT
    "P3|PRON|VERB|DET": 1, "P3|VERB|DET|NOUN": 1, "P3|DET|NOUN|PUNCT": 1,
})

# The/DET <-det- strings/NOUN <-nsubj- broke/VERB(ROOT); after/ADP <-prep- broke;
# two/NUM <-nummod- weeks/NOUN <-pobj- after; ,/PUNCT and ./PUNCT <-punct- broke;
# sadly/ADV <-advmod- broke
STRINGS_BROKE = Counter({
    "D3|NOUN|det|DET": 1, "D3|VERB|nsubj|NOUN": 1, "D3|VERB|prep|ADP": 1,
    "D3|NOUN|nummod|NUM": 1, "D3|ADP|pobj|NOUN": 1, "D3|VERB|punct|PUNCT": 2,
    "D3|VERB|advmod|ADV": 1,
    "D4|VERB|NOUN|det|DET": 1, "D4|ADP|NOUN|nummod|NUM": 1, "D4|VERB|ADP|pobj|NOUN": 1,
    "P3|DET|NOUN|VERB": 1, "P3|NOUN|VERB|ADP": 1, "P3|VERB|ADP|NUM": 1, "P3|ADP|NUM|NOUN": 1,
    "P3|NUM|NOUN|PUNCT": 1, "P3|NOUN|PUNCT|ADV": 1, "P3|PUNCT|ADV|PUNCT": 1,
})


def test_rules_of_hand_parsed_sentences():
    nlp = load_pipeline()
    assert sentence_rules(nlp("I love this guitar.")) == [I_LOVE_THIS_GUITAR]
    assert sentence_rules(nlp("The strings broke after two weeks, sadly.")) == [STRINGS_BROKE]


def test_whitespace_is_dropped_punctuation_kept_and_sentences_line_up():
    # spaCy: Great/ADJ <-amod- sound/NOUN, with a SPACE token between them and "\n" before Thanks
    [rules] = text_rules(["Great  sound! Would buy again.\nThanks"], batch_size=2)
    assert rules == [
        Counter({"D3|NOUN|amod|ADJ": 1, "D3|NOUN|punct|PUNCT": 1, "P3|ADJ|NOUN|PUNCT": 1}),
        Counter({"D3|VERB|aux|AUX": 1, "D3|VERB|advmod|ADV": 1, "D3|VERB|punct|PUNCT": 1,
                 "P3|AUX|VERB|ADV": 1, "P3|VERB|ADV|PUNCT": 1}),
        Counter(),  # "Thanks" alone: a root and nothing else, still one entry per sentence
    ]
    assert not any("SPACE" in rule for sentence in rules for rule in sentence)


def test_min_df_counts_sentences_not_occurrences_and_values_are_x_over_1_plus_x():
    counters = [Counter(a=2, b=1), Counter(a=1, c=3), Counter(b=1), Counter(d=0)]
    space = FeatureSpace.fit(counters, min_df=2)
    assert space.vocabulary == ["a", "b"]  # c occurs 3 times but in one sentence; d never
    X = space.transform(counters + [Counter(a=4, unseen=9)])
    assert X.dtype == np.float32
    np.testing.assert_array_equal(X, np.array(
        [[2 / 3, 1 / 2], [1 / 2, 0], [0, 1 / 2], [0, 0], [4 / 5, 0]], dtype=np.float32))
    np.testing.assert_array_equal(space.transform(counters, sparse=True).toarray(),
                                  space.transform(counters))
    assert FeatureSpace.fit(counters, min_df=1).vocabulary == ["a", "b", "c"]
    assert FeatureSpace.from_json(space.to_json()) == space


# ---- the contrastive encoder ------------------------------------------------------------------

def _two_users(seed: int = 1, n: int = 60) -> tuple[np.ndarray, np.ndarray]:
    """Two users over 40 rules: A favours rules 0-19, B rules 20-39 (Poisson counts)."""
    rng = np.random.default_rng(seed)
    rates = np.r_[np.full(20, 1.0), np.full(20, 0.3)]
    a = rng.poisson(rates, size=(n, 40)).astype(np.float32)
    b = rng.poisson(rates[::-1], size=(n, 40)).astype(np.float32)
    return a / (1 + a), b / (1 + b)


def _options():
    from personalens.lenses.pqb.style_encoder import EncoderOptions

    return EncoderOptions(epochs=15, batch_size=32, seed=0)


@pytest.fixture(scope="module")
def trained():
    from personalens.lenses.pqb.style_encoder import train_encoder

    a, b = _two_users()
    X, users = np.vstack([a[:40], b[:40]]), ["A"] * 40 + ["B"] * 40
    epochs: list[tuple[int, float]] = []
    encoder = train_encoder(X, users, _options(), progress=lambda e, loss: epochs.append((e, loss)))
    return encoder, X, users, epochs, (a[40:], b[40:])


def test_supcon_loss_hand_computed():
    import torch

    from personalens.lenses.pqb.style_encoder import supcon_loss

    z = torch.tensor([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0], [0.0, 1.0]], dtype=torch.float64)
    loss = supcon_loss(z, torch.tensor([0, 0, 1, 1]), temperature=0.1)
    # each anchor: one positive at cosine 1 (logit 10), two negatives at 0
    assert float(loss) == pytest.approx(np.log(1 + 2 * np.exp(-10)), rel=1e-9)
    # two positives per anchor at cosine 1, three negatives at 0: -log(e^10 / (2e^10 + 3))
    z3 = torch.tensor([[1.0, 0.0]] * 3 + [[0.0, 1.0]] * 3, dtype=torch.float64)
    loss3 = supcon_loss(z3, torch.tensor([0, 0, 0, 1, 1, 1]), temperature=0.1)
    assert float(loss3) == pytest.approx(np.log(2 + 3 * np.exp(-10)), rel=1e-9)


def test_encoder_separates_two_users_on_held_out_sentences(trained):
    encoder, X, _, epochs, (held_a, held_b) = trained
    Z = encoder.encode(X)
    assert Z.shape == (80, 16) and Z.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(Z, axis=1), 1.0, rtol=1e-5)
    centroids = np.stack([Z[:40].mean(axis=0), Z[40:].mean(axis=0)])
    held = encoder.encode(np.vstack([held_a, held_b]))
    nearest = ((held[:, None, :] - centroids[None]) ** 2).sum(axis=2).argmin(axis=1)
    assert (nearest == np.r_[np.zeros(20), np.ones(20)]).mean() >= 0.9
    assert [e for e, _ in epochs] == list(range(1, 16))
    assert encoder.history == [loss for _, loss in epochs]
    assert encoder.history[-1] < encoder.history[0]


def test_encoder_is_deterministic_for_a_seed_and_round_trips(trained, tmp_path):
    import torch

    from personalens.lenses.pqb.style_encoder import EncoderOptions, StyleEncoder, train_encoder

    encoder, X, users, _, _ = trained
    torch.manual_seed(123)
    expected_draw = torch.rand(1)
    torch.manual_seed(123)
    again = train_encoder(X, users, _options())
    assert torch.equal(torch.rand(1), expected_draw)  # the caller's torch RNG is left alone
    np.testing.assert_array_equal(again.encode(X), encoder.encode(X))
    assert again.history == encoder.history
    other = train_encoder(X, users, EncoderOptions(epochs=15, batch_size=32, seed=1))
    assert not np.array_equal(other.encode(X), encoder.encode(X))

    path = tmp_path / "encoder.npz"
    encoder.save(path)
    loaded = StyleEncoder.load(path)
    np.testing.assert_array_equal(loaded.encode(X), encoder.encode(X))
    assert loaded.options == _options() and loaded.history == encoder.history
    with np.load(path, allow_pickle=False) as data:  # plain arrays only
        assert all(data[k].dtype != object for k in data.files)


def test_encoder_accepts_sparse_features_and_rejects_bad_input(trained):
    import scipy.sparse

    from personalens.lenses.pqb.style_encoder import train_encoder

    encoder, X, users, _, _ = trained
    np.testing.assert_array_equal(encoder.encode(scipy.sparse.csr_matrix(X)), encoder.encode(X))
    with pytest.raises(ValueError, match="expects 40"):
        encoder.encode(X[:, :10])
    with pytest.raises(ValueError, match="at least 2 users"):
        train_encoder(X, ["A"] * 80, _options())


# ---- user Gaussians ----------------------------------------------------------------------------

def _random_gaussian(rng: np.random.Generator, dim: int = 16) -> Gaussian:
    A = rng.normal(size=(dim, dim))
    return Gaussian(rng.normal(size=dim), A @ A.T / dim + 0.1 * np.eye(dim))


def test_mahalanobis_and_log_density_match_scipy():
    rng = np.random.default_rng(0)
    g = _random_gaussian(rng)
    X = rng.normal(size=(7, 16))
    inverse = np.linalg.inv(g.cov)
    expected = [mahalanobis(x, g.mean, inverse) ** 2 for x in X]
    np.testing.assert_allclose(g.mahalanobis_sq(X), expected, rtol=1e-9)
    np.testing.assert_allclose(g.log_density(X),
                               multivariate_normal(g.mean, g.cov).logpdf(X), rtol=1e-9)
    assert g.mahalanobis_sq(g.mean).tolist() == [0.0]
    assert Gaussian.from_json(g.to_json()).cov.tolist() == g.cov.tolist()


def test_log_density_is_stable_for_a_badly_scaled_covariance():
    rng = np.random.default_rng(1)
    rotation, _ = np.linalg.qr(rng.normal(size=(16, 16)))
    cov = rotation @ np.diag(np.logspace(-8, 4, 16)) @ rotation.T
    g = Gaussian(np.zeros(16), cov)
    # condition number 1e12: building `cov` already perturbs the smallest eigenvalue by ~1e-4
    # relative, so both routes can only agree with the exact log det to about that
    assert g.log_det == pytest.approx(np.linalg.slogdet(cov)[1], abs=1e-4)
    assert g.log_det == pytest.approx(-32 * np.log(10.0), abs=1e-4)  # Σ log10 eig = 16 × -2
    assert np.isfinite(g.log_density(rng.normal(size=(3, 16)))).all()
    with pytest.raises(ValueError, match="not positive definite"):
        Gaussian(np.zeros(2), np.array([[1.0, 2.0], [2.0, 1.0]])).log_density(np.zeros(2))


def test_chi2_region():
    assert chi2_region(0.95, 16) == pytest.approx(26.296, abs=1e-3)
    assert round(chi2_region(0.95, 16), 2) == CHI2_95_16
    assert chi2_region(0.95, 2) == pytest.approx(5.991, abs=1e-3)


def test_bhattacharyya_closed_forms():
    rng = np.random.default_rng(2)
    g = _random_gaussian(rng)
    assert bhattacharyya(g, g) == pytest.approx(0.0, abs=1e-12)
    shifted = Gaussian(g.mean + rng.normal(size=16), g.cov)
    d = shifted.mean - g.mean
    assert bhattacharyya(g, shifted) == pytest.approx(d @ np.linalg.solve(g.cov, d) / 8)
    # 1-D by hand: N(0, 1) vs N(1, 4): S = 2.5 -> 1/8 * 1/2.5 + 1/2 ln(2.5 / sqrt(4)) = 0.16157
    one, four = Gaussian(np.zeros(1), np.eye(1)), Gaussian(np.ones(1), 4 * np.eye(1))
    assert bhattacharyya(one, four) == pytest.approx(0.05 + 0.5 * np.log(1.25))
    assert bhattacharyya(one, four) == pytest.approx(0.161572, abs=1e-6)
    assert bhattacharyya(four, one) == pytest.approx(bhattacharyya(one, four))


def test_full_fit_is_sample_covariance_plus_ridge():
    X = np.random.default_rng(3).normal(size=(50, 16))
    g = fit_full(X, ridge=1e-4)
    np.testing.assert_allclose(g.mean, X.mean(axis=0))
    np.testing.assert_allclose(g.cov, np.cov(X, rowvar=False) + 1e-4 * np.eye(16), atol=1e-12)


def test_low_rank_fit_is_spd_keeps_variances_and_approaches_the_sample_covariance():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(300, 3)) @ rng.normal(size=(3, 16)) + 0.3 * rng.normal(size=(300, 16))
    sample = np.cov(X, rowvar=False)
    low = fit_low_rank(X, rank=4)
    assert np.array_equal(low.cov, low.cov.T)
    assert np.linalg.eigvalsh(low.cov).min() > 0
    np.testing.assert_allclose(np.diag(low.cov), np.diag(sample), rtol=1e-10)  # ψ = residual
    full_rank = fit_low_rank(X, rank=16, floor=1e-6)
    np.testing.assert_allclose(full_rank.cov, sample + 1e-6 * np.eye(16), atol=1e-10)
    errors = [np.linalg.norm(fit_low_rank(X, rank=r).cov - sample) for r in (1, 2, 3)]
    assert errors[0] > errors[1] > errors[2]
    assert errors[2] < 0.02 * errors[0]  # three true factors: rank 3 captures the structure


# ---- pair selection -----------------------------------------------------------------------------

REGION_2D = chi2_region(0.95, 2)  # 5.991


def _unit(*mean: float) -> Gaussian:
    return Gaussian(np.array(mean, dtype=float), np.eye(len(mean)))


def test_each_user_gets_their_most_likely_belonging_candidate():
    gaussians = {"a": _unit(0, 0), "b": _unit(10, 0)}
    vectors = np.array([[1, 0], [0, 0], [10, 0], [5, 0], [9.5, 0.5]])
    choice = select_pair(["b", "a"], gaussians, vectors, SelectionOptions(region=REGION_2D))
    assert (choice.user_a, choice.user_b) == ("a", "b")
    assert (choice.candidate_a, choice.candidate_b) == (1, 2)  # (5, 0) is outside both regions
    assert choice.bhattacharyya == pytest.approx(100 / 8)
    assert choice.log_density_a == pytest.approx(-np.log(2 * np.pi))
    assert choice.rival_log_density_a == pytest.approx(-np.log(2 * np.pi) - 50)
    assert (choice.mahalanobis_sq_a, choice.rival_mahalanobis_sq_a) == (0.0, 100.0)
    assert (choice.mahalanobis_sq_b, choice.rival_mahalanobis_sq_b) == (0.0, 100.0)
    assert choice.to_json()["candidate_b"] == 2


def test_the_margin_gate_excludes_a_candidate_barely_better_for_its_owner():
    gaussians = {"a": _unit(0, 0), "b": _unit(4.9, 0)}
    vectors = np.array([[2.4, 0], [7, 0]])
    m_a, m_b = gaussians["a"].mahalanobis_sq(vectors), gaussians["b"].mahalanobis_sq(vectors)
    assert m_a[0] == pytest.approx(5.76) and m_b[0] == pytest.approx(6.25)  # in a's, out of b's
    gap = gaussians["a"].log_density(vectors) - gaussians["b"].log_density(vectors)
    assert gap[0] == pytest.approx(0.245)
    options = SelectionOptions(region=REGION_2D, margin=1.0)
    assert not belongs(m_a, m_b, *[g.log_density(vectors) for g in gaussians.values()],
                       options)[0]
    assert select_pair(["a", "b"], gaussians, vectors, options) is None
    looser = select_pair(["a", "b"], gaussians, vectors, SelectionOptions(REGION_2D, margin=0.2))
    assert (looser.candidate_a, looser.candidate_b) == (0, 1)


def test_the_region_gate_excludes_a_candidate_outside_its_owners_region():
    gaussians = {"a": _unit(0, 0), "b": _unit(10, 0)}
    vectors = np.array([[-3, 0], [10, 0]])  # M_a = 9 > 5.99, though a is far likelier than b
    assert select_pair(["a", "b"], gaussians, vectors, SelectionOptions(REGION_2D)) is None
    wider = select_pair(["a", "b"], gaussians, vectors, SelectionOptions(region=10.0))
    assert (wider.candidate_a, wider.candidate_b) == (0, 1)
    assert wider.mahalanobis_sq_a == pytest.approx(9.0)


def test_the_pair_with_the_largest_bhattacharyya_distance_is_kept():
    gaussians = {"u1": _unit(0, 0), "u2": _unit(10, 0), "u3": _unit(0, 20)}
    at_means = np.array([[0, 0], [10, 0], [0, 20]])
    options = SelectionOptions(region=REGION_2D)
    # B(u1,u2) = 100/8 = 12.5, B(u1,u3) = 400/8 = 50, B(u2,u3) = 500/8 = 62.5
    choice = select_pair(["u3", "ghost", "u1", "u2"], gaussians, at_means, options)
    assert (choice.user_a, choice.user_b, choice.candidate_a, choice.candidate_b) == \
        ("u2", "u3", 1, 2)
    assert choice.bhattacharyya == pytest.approx(62.5)
    # Without a candidate for u3, no pair with u3 qualifies, however far apart.
    fallback = select_pair(["u1", "u2", "u3"], gaussians, at_means[:2], options)
    assert (fallback.user_a, fallback.user_b, fallback.bhattacharyya) == ("u1", "u2", 12.5)


def test_ties_go_to_the_first_pair_by_user_id():
    twin = _unit(10, 0)
    gaussians = {"u1": _unit(0, 0), "u2": twin, "u3": twin}  # B(u1,u2) = B(u1,u3)
    vectors = np.array([[0, 0], [10, 0]])
    for users in (["u1", "u2", "u3"], ["u3", "u2", "u1"], ["u2", "u3", "u1"]):
        choice = select_pair(users, gaussians, vectors, SelectionOptions(REGION_2D))
        assert (choice.user_a, choice.user_b) == ("u1", "u2")


def test_sixteen_dimensional_case_with_the_paper_defaults():
    e1, e2 = np.eye(16)[0], np.eye(16)[1]
    gaussians = {"wide": Gaussian(np.zeros(16), np.eye(16)),
                 "tight": Gaussian(6 * e1, 0.25 * np.eye(16))}
    vectors = np.stack([3 * e1, 6 * e1 + 1.5 * e2, np.zeros(16), 6 * e1])
    choice = select_pair(["wide", "tight"], gaussians, vectors)
    assert SelectionOptions() == SelectionOptions(region=26.30, margin=1.0)
    # 3·e1 is inside both regions (M = 9 and 36): nobody's
    assert (choice.user_a, choice.candidate_a) == ("tight", 3)  # its mean beats 6e1 + 1.5e2
    assert (choice.user_b, choice.candidate_b) == ("wide", 2)
    assert choice.rival_mahalanobis_sq_b == pytest.approx(36 / 0.25)
    expected = 36 / (8 * 0.625) + 0.5 * (16 * np.log(0.625) - 8 * np.log(0.25))
    assert choice.bhattacharyya == pytest.approx(expected)
    assert select_pair(["wide"], gaussians, vectors) is None
    assert select_pair(["wide", "tight"], gaussians, np.zeros((0, 16))) is None
