"""Figures and summaries: figures.py (matplotlib, the report's overview figures),
psse_figures.py (the psse stage's fit plots), summary.py (the report stage's engine)."""
