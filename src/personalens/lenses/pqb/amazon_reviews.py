"""`pqb build` from Amazon Reviews 2023: a reviews file `<Category>.jsonl` and its item metadata
`meta_<Category>.jsonl`.

A user's history is their reviews (title, then text, HTML removed) in time order; the products
are the meta items that at least one kept review names by parent_asin, with their reviewers as
users. Both files are streamed (the published ones run to gigabytes): memory holds the kept
reviews and the reviewed items, not the files.
"""

import html
import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import pydantic

from personalens.errors import InputError
from personalens.input_files import read_jsonl_objects, validation_message
from personalens.lenses.pqb.build_source import BuildSource, Product, product_from_meta
from personalens.lenses.pqb.release_format import meta_items

# Tags start with a letter right after "<" or "</", so "2 < 3" in prose survives. Tags that
# break a line (<br />, paragraphs, list items) end one; inline tags (<b>, <a>) just go.
_BREAK = re.compile(r"</?(?:br|p|div|li|ul|ol|h[1-6])\b[^<>]*>", re.IGNORECASE)
_TAG = re.compile(r"</?[a-zA-Z][^<>]*>")


class Review(pydantic.BaseModel):
    """The fields of a review line that `pqb build` uses (rating, images, ... are ignored)."""

    model_config = pydantic.ConfigDict(extra="ignore", strict=True)

    user_id: str = pydantic.Field(min_length=1)
    parent_asin: str = pydantic.Field(min_length=1)
    title: str
    text: str
    timestamp: int  # Unix milliseconds


@dataclass(frozen=True, slots=True)  # slots: millions of these may be held
class _Kept:
    timestamp: int
    order: int  # ties in time keep the file's order
    user: str
    parent_asin: str
    text: str


def plain_text(markup: str) -> str:
    """Review markup as plain text: <br /> ends a line, other tags go, entities are decoded."""
    text = html.unescape(_TAG.sub("", _BREAK.sub("\n", markup)))
    lines = (" ".join(line.split()) for line in text.splitlines())
    return "\n".join(line for line in lines if line)


def _read_reviews(path: Path) -> tuple[list[_Kept], int]:
    """Non-empty reviews, and how many were empty once their markup was removed."""
    kept, empty = [], 0
    for order, (where, raw) in enumerate(read_jsonl_objects(path, "reviews"), start=1):
        try:
            review = Review.model_validate(raw)
        except pydantic.ValidationError as exc:
            raise InputError(validation_message(exc), where=where) from None
        text = "\n".join(p for p in (plain_text(review.title), plain_text(review.text)) if p)
        if not text:
            empty += 1
            continue
        kept.append(_Kept(review.timestamp, order, review.user_id, review.parent_asin, text))
    return kept, empty


def _reviewed_items(path: Path, reviewed: set[str]) -> dict[str, dict]:
    """The meta items some review names, by parent_asin, in the meta file's order."""
    items: dict[str, dict] = {}
    for where, asin, item in meta_items(path):
        if asin not in reviewed:
            continue
        if asin in items:
            raise InputError(f"duplicate parent_asin {asin}", where=where)
        items[asin] = item
    return items


def load_amazon(reviews: Path, meta: Path) -> BuildSource:
    """Histories, products and their reviewers from one category's reviews and meta files.

    A review whose parent_asin is not in the meta file is skipped and counted in `origin`.
    """
    kept, empty = _read_reviews(reviews)
    items = _reviewed_items(meta, {r.parent_asin for r in kept})
    histories: dict[str, list[str]] = defaultdict(list)
    reviewers: dict[str, set[str]] = defaultdict(set)
    unknown = 0
    for review in sorted(kept, key=lambda r: (r.timestamp, r.order)):
        if review.parent_asin not in items:
            unknown += 1
            continue
        histories[review.user].append(review.text)
        reviewers[review.parent_asin].add(review.user)
    products: list[Product] = [product_from_meta(item, tuple(sorted(reviewers[asin])))
                               for asin, item in items.items()]
    origin = (f"Amazon Reviews 2023: {reviews.name} ({len(kept) - unknown} reviews by "
              f"{len(histories)} users), {meta.name} ({len(products)} reviewed items); skipped "
              f"{unknown} review(s) whose parent_asin is not in the meta file and {empty} empty "
              "review(s)")
    return BuildSource(products, dict(histories), origin=origin)
