from personalens.report import HtmlReport


def test_report_escapes_untrusted_text_and_forbids_scripts():
    report = HtmlReport("<script>alert(1)</script>")
    report.paragraph('<img src=x onerror="alert(2)">')
    report.table(["<b>h</b>"], [["<script>alert(3)</script>"], [0.12345], [None], [7]])
    page = report.render()
    assert "<script>" not in page and "<img src=x" not in page
    assert "&lt;script&gt;alert(3)&lt;/script&gt;" in page
    assert '<td class="num">0.123</td>' in page and '<td class="num">7</td>' in page
    assert "default-src 'none'" in page
