"""No unsafe deserialisation or eval anywhere in the package's source. (Secrets and folder names:
tests/population/test_security.py.)"""




def test_no_unsafe_deserialisation_or_eval_in_the_package():
    import re
    from pathlib import Path

    source = Path(__file__).resolve().parents[1] / "src" / "personalens"
    unsafe = re.compile(r"\bimport pickle\b|\bpickle\.loads?\(|(?<![\w.])eval\(|\bexec\(|"
                        r"yaml\.load\(|yaml\.unsafe_load|\bmarshal\.loads\(")
    hits = [f"{p}:{n}" for p in source.rglob("*.py")
            for n, line in enumerate(p.read_text().splitlines(), 1) if unsafe.search(line)]
    assert hits == []
