"""The sums-of-precisions family: SSP, SP, AP and AP(norm=min) (``sums``), their bounds without a
model (``bounds``), and the self-normalised metrics SN_AP and SN_DCG built on them
(``self_normalised``).  Imported by ``medopt.formulations``, which registers the formulations."""
