"""Flip distances (SPEC 11): how many judgments must go against a conclusion before it flips.

``flip_distance(metric, run_a, run_b, qrels)`` (distance.py) answers: starting from a reference
labelling L of the documents that may change (default: every unjudged document of the two lists'
counted ranks at grade 0, trec_eval's convention; or a labels file, its grades taken into 0..G),
what is the fewest documents whose grade must differ from L for the mean difference M(A) - M(B)
over the topics (SPEC 10) to reach 0 or cross it?  None ("never") when the mean difference range
(SPEC 7, result.mean_range over the topics' proven bounds) excludes 0 on the side of D_L.

The computation, and why it is exact
------------------------------------
Let s be the sign of the reference mean difference D_L (F = 0 when D_L = 0) and, for topic t,
d_t(X) = M(A_t) - M(B_t) under a completion X.  The **movement** of X on t is
s (d_t(L) - d_t(X)): how far X pulls the topic's difference against the reference.  A completion
flips iff  sum_t movement_t(X_t) >= s sum_t d_t(L) =: lead  (the mean reaches 0 or crosses it;
tolerance: tol per topic, SPEC 7's).  Topics share no documents and the distance adds over topics,
so with the **curve** c_t(h) = max movement on t over completions of t at distance <= h:

    F = min { sum_t h_t : sum_t c_t(h_t) >= lead }.

(<=: the completions reaching c_t(h_t) on each topic, put together, are one completion at
distance sum h_t with total movement sum c_t(h_t).  >=: any flipping completion X has
movement_t(X_t) <= c_t(dist_t(X_t)), so its allocation dist_t(X_t) satisfies the constraint.)
The minimum is a knapsack over the topics solved exactly by a dynamic programme on the integer
total H (max-plus convolution of the curves: best_H = max sum c_t(h_t) with sum h_t = H; F is
the first H with best_H >= lead).  A curve is non-decreasing and constant from the point where it
reaches the topic's range end (the difference range, SPEC 7, whose far end bounds every c_t(h)),
and from h = the number of the topic's changeable documents; each is computed only up to the
totals the programme reaches.

Two programmes run side by side: one over the curve values reached (each with a completion, so
it gives the witness and an upper bound on F), one over proven upper bounds on the curves (it
gives a proven lower bound on F: no allocation of fewer changes can move the lead away).  F is
**certified** when both give the same total and the witness, re-scored by the metric evaluator
(Instance.scores, independent of every model), flips.

Curves, by metric family
------------------------
* **Dot products** (P, DCG, SDCG, RBP: ``M(X) = sum_i W(i) u(grade_i)``, methods.is_dot_product):
  d_t(X) = const + sum_d w_d u(X_d) with w_d = W_A(d) - W_B(d) (a shared document has one grade,
  its two weights in one w_d), and the distance is sum_d cost_d(X_d) (cost_d(g) = [g != L_d], or
  |g - L_d| for ``distance="grades"``).  The movement is a sum of independent per-document terms
  s w_d (u(L_d) - u(X_d)) under a budget on a sum of independent integer costs: a group knapsack,
  solved exactly by a dynamic programme over the documents and the budget (each document picks one
  grade; ``curves.separable_curve``).  For the document distance it is a sort: each document's best grade,
  the largest gains first.  Every point is exact (its own bound).  Recall-based metrics (AP, nDCG,
  R, Rprec, Q) are not linear: a document made relevant moves R and the ideal gains of both lists.
* **First-relevant families** (RR, Success): M(A) depends only on the position of A's first relevant
  document, so a completion's movement depends only on the pair (p, q) of first relevant positions
  in A and B; the fewest changes reaching (p, q) is a sum of per-document least costs (the documents
  above p and q non-relevant, those at p and q relevant), and c_t(h) is the best movement over the
  states that cost at most h: a scan over every state, exact at every point
  (``curves.first_relevant_curve``, where the proof is).
* For these closed-form curves (dot products, RR, Success) the curve's last point is the topic's far
  end against the reference, exact: no range is solved.
* **Every other family, default reference and scope** (or labels that are all 0 on the topic):
  with L = 0 on the unjudged documents, the document distance of X is the number of unjudged
  documents given a positive grade, so "distance <= h" is the relevance limit
  ``#documents with grade >= 1 <= judged + h`` (RelevanceLimit, SPEC 1's count over the collection);
  the grade distance is a sum over g of #(grade >= g), and c_t(h) is the best over the splits of h
  into per-grade counts, each a set of such limits (the proof: ``curves.LimitedCurve``).  Each point
  c_t(h) is then the end, against the reference, of the difference range under the limits, solved by
  the family's exact model (medopt.difference_range with ``limits``): its value (re-scored) and its
  proven bound.  Under a time limit a point may be unproven: its bound still enters the lower-bound
  programme.
* **Every other family otherwise** (labels not all 0, ``scope="all"``):
  enumeration of every completion of the topic's changeable documents when there are at most
  ``curves.ENUMERATION_LIMIT`` completions, which gives the whole curve exactly; above that, only the far end of
  the difference range is known (its completion as a witness, its bound for every h >= 1): the
  answer is a witness and a proven lower bound, not certified.

Scope ``all``: the documents of the two lists' counted ranks may all change, a judged one's reference
being its judgment (negative grades at 0, grades above G at G); judged documents outside both lists
stay as judged (they still count towards R).  Labels for judged documents are ignored, with one
warning.
"""

from .distance import DISTANCES, SCOPES, FlipResult, flip_distance

__all__ = ["DISTANCES", "SCOPES", "FlipResult", "flip_distance"]
