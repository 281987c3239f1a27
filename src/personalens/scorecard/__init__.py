"""`personalens scorecard`: several systems through the four lenses on one population, and one
page that compares them (the layer above compare: it runs the lenses, then compares their runs).
"""
