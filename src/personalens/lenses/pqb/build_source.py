"""What `pqb build` starts from, whichever data it came from (Amazon Reviews 2023 or a
generated population): a product corpus, the users who own each product, and each user's own
written text (their writing history)."""

from dataclasses import dataclass, field

from personalens.lenses.pqb.release_format import item_text


@dataclass(frozen=True)
class Product:
    parent_asin: str  # the item id; for a generated population, a stable id made from the name
    title: str
    text: str  # the document a retriever indexes (title, brand, categories, features, ...)
    meta: dict  # the item as a meta_<Category>.jsonl line, written to the built corpus
    users: tuple[str, ...]  # users who reviewed (Amazon) or bought (population) the item


@dataclass(frozen=True)
class BuildSource:
    products: list[Product]
    histories: dict[str, list[str]]  # uid -> the user's own texts, in time order
    typo_truth: dict[str, dict[str, float]] = field(default_factory=dict)  # uid -> kind -> rate
    origin: str = ""  # a one-line description for the manifest and the report


def product_from_meta(item: dict, users: tuple[str, ...]) -> Product:
    """A product from its meta line, indexed as `pqb eval` indexes a meta file."""
    title = item.get("title")
    return Product(item["parent_asin"], title if isinstance(title, str) else "", item_text(item),
                   item, users)
