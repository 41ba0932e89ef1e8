"""GPINT with data recovery (Simsek et al.): the evaluation's figures 8-15.

``figures`` registers ``gpint-fig8`` ... ``gpint-fig15``; all share one
sweep of ``run_gpint`` points (size, planner, load, recovery, link loss,
repetition) and one aggregation (mean and 95 % confidence interval over
repetitions, as the paper reports its 20 repetitions).
"""
