"""The Q-measure family: its formulation (``measure``: profile enumeration and the branch and bound
over boxes of profiles), the profiles and boxes, the box template and terms, the roof-dual form of a
box and its rows.  Imported by ``medopt.formulations``, which registers ``measure.QMeasure``."""
