"""The fair-play desk: cases that live across an audit's looks (cases.py, in SQLite: db.py) and the review server.

``db`` opens and migrates the cases database, ``looks`` reads an audit's result into what a look saw of each marked
pair or group, ``cases`` records looks and reviewers' decisions and lists and shows cases, ``serve`` is the review
page (the optional extra ``serve``: Flask).
"""
