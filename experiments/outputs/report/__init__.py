"""One self-contained HTML page for a run (docs/design.md §3): every figure, the fidelity table,
optional tables (Table 2), run times, the errata (docs/design.md §5.0, §5.3), the provenance, and the
data sets the run could not use (``not_reproduced``).

One module per concern: :mod:`.contents` (what the run made: experiments, figures, tables, run
times, missing data sets), :mod:`.findings` (what it found: fidelity, errata, scorecard,
user-level findings, audit), :mod:`.provenance`, :mod:`.html` (data tables rendered by pandas'
``Styler.to_html``, each in a horizontally scrolling box, long ones folded behind a summary
line; figures), and :mod:`.page` (``render_report`` fills the jinja2 template
``experiments/outputs/report/templates/report.html.j2``; the job that writes it is
:func:`experiments.jobs.results.report_job`). Images are embedded as base64 PNG, linked to their
full-size PNG and PDF, and the CSS is inline, so the page can be mailed; docs/workflow.md#the-report-page
says how it is laid out and tested in a browser.
"""
