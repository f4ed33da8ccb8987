"""Proofs of the reduction facts (base.Reduction), as the families that declare them cite them.

Notation: X is the better list of a direction, Y the other; r_X(d) is d's rank in X's top k
(infinity when absent); an X-only document is unjudged and in X's top k but not in Y's.  Each
claim is about some maximiser of M(X) - M(Y); a proof marked ``any_sign`` holds whatever the sign
of the maximum, any other only for a maximum >= 0 (the cascade's shared prefix: > 0), so
reductions.py applies it for MED always and for one end of a range only when some assignment
is known to give that direction a difference > 0.  A family cites a
proof only when every step of it holds for that family's definition (SPEC 3).
"""


class Proof(str):
    """A proof's text, with whether it holds whatever the sign of the maximum (``any_sign``)."""

    any_sign: bool

    def __new__(cls, text: str, *, any_sign: bool):
        proof = super().__new__(cls, text)
        proof.any_sign = any_sign
        return proof

WORSE_ONLY_DOT_PRODUCT = Proof(
    "M = sum_i W(i) u(grade_i) with W >= 0 and u non-decreasing, u(0) = 0.  Raising a Y-only "
    "document's grade leaves M(X) unchanged and cannot lower M(Y), so grade 0 is best.", any_sign=True)

WORSE_ONLY_RATIO = Proof(
    "M = N / D with a numerator that is a non-decreasing function of the grades of the ranked "
    "documents and a denominator D (R or the ideal DCG, counted over the collection) that is "
    "non-decreasing in every grade.  Raising a Y-only document leaves X's numerator alone, cannot "
    "lower Y's, and can only raise the shared D: with N = num(X) - num(Y) >= 0, "
    "(N - delta) / (D + eps) <= N / D.", any_sign=False)

WORSE_ONLY_SUM_OF_PRECISIONS = Proof(
    "SSP@k = SP / k, SP = sum_i b_i P@i is non-decreasing in every b_i.  Raising a Y-only document "
    "leaves SP(X) alone and cannot lower SP(Y).", any_sign=True)

WORSE_ONLY_CASCADE = Proof(
    "RR and ERR are non-decreasing in each document's stop probability c_i: dERR/dc_i = reach_i "
    "(1/i - sum_{j>i} (c_j/j) prod_{i<l<j}(1-c_l)) >= reach_i (1/i - 1/(i+1)) >= 0.  Raising a Y-only "
    "document leaves M(X) alone and cannot lower M(Y).", any_sign=True)

RANK_DOMINANCE_DECREASING_WEIGHTS = Proof(
    "If r_X(d) <= r_X(e) and r_Y(d) >= r_Y(e), some maximiser has grade(d) >= grade(e): swapping "
    "the two grades when grade(d) < grade(e) keeps the multiset of grades (so R, the ideal DCG and "
    "every limit), moves the larger grade up (or into) X, which cannot lower a sum with "
    "non-increasing rank weights (DCG, precision, RBP, the sum of precisions), and down (or out of) "
    "Y, which cannot raise Y's.  This holds for every assignment, whatever the sign of the "
    "difference.  Only covering pairs are kept; transitivity gives the rest.", any_sign=True)

RANK_DOMINANCE_CASCADE = Proof(
    "As for non-increasing weights, with the cascade step: stop probabilities c_i < c_j at ranks "
    "i < j, a block between them of survival s and per-reach score E <= (1 - s)/(i + 1); swapping "
    "the grades changes the score by reach (c_j - c_i)(1/i - E - s/j) >= 0 and leaves the survival "
    "below j unchanged.  The swap keeps the multiset of grades, so every limit.", any_sign=True)

BETTER_ONLY_CASCADE = Proof(
    "M(X) is non-decreasing in each stop probability (see WORSE_ONLY_CASCADE) and M(Y) does not see "
    "an X-only document: the top grade G is best (no side constraints).", any_sign=True)

NET_WEIGHT_NDCG = Proof(
    "The difference is N / D with N = sum_d gain(d) (w_X(d) - w_Y(d)) (discounts, 0 outside a top "
    "k) and D = IDCG, non-decreasing in every gain.  Lowering a document with w_X(d) <= w_Y(d) to "
    "grade 0 cannot lower N and cannot raise D; with N >= 0 the ratio cannot fall.  (This contains "
    "WORSE_ONLY for nDCG.)", any_sign=False)

SHARED_ENDS_CASCADE = Proof(
    "The common prefix is the first p ranks, where both lists hold the same document at each rank; "
    "such a document is at no other rank, so M(X) = (terms of ranks <= p, equal in X and Y) + S T_X "
    "with S = prod_{i<=p} (1 - c_i) and T_X the cascade of X's ranks below p: M(X) - M(Y) = "
    "S (T_X - T_Y).  If some tail has T_X - T_Y >= 0, the largest S (prefix at grade 0) times the "
    "largest tail difference is the maximum; otherwise every difference is <= 0 and this direction "
    "cannot hold the MED.  The common suffix is the ranks below q where both lists hold the same "
    "document at each rank, when their first q ranks hold the same set: the reach of every suffix "
    "rank is a product over the same documents in X and Y, so suffix terms cancel for every "
    "assignment and their grades do not matter.", any_sign=False)

WORSE_ONLY_SUCCESS = Proof(
    "Success@k = max_{i<=k} b_i is non-decreasing in every b_i of its own top k and sees no other "
    "document.  Raising a Y-only document leaves Success(X) unchanged and cannot lower Success(Y), so "
    "grade 0 is best, whatever the sign of the difference.", any_sign=True)

BETTER_ONLY_SUCCESS = Proof(
    "Raising an X-only document cannot lower Success(X) = max_{i<=k} b_i (b is non-decreasing in the "
    "grade) and leaves Success(Y) unchanged: the top grade G is best (no side constraints), whatever the "
    "sign of the difference.", any_sign=True)

RANK_DOMINANCE_SUCCESS = Proof(
    "If r_X(d) <= r_X(e) and r_Y(d) >= r_Y(e) (absent: deeper than every rank) and grade(d) < "
    "grade(e), swap the two grades; the multiset of grades, so every limit, is kept.  Of the pair, X's "
    "top k holds both (the same two grades as before), only d (now the higher grade) or neither, since e "
    "in it implies d is: Success(X), a non-decreasing function of the grades in its top k, cannot fall.  "
    "Y's top k holds both, only e (now the lower grade) or neither: Success(Y) cannot rise.  This holds "
    "for every assignment, whatever the sign of the difference.  Only covering pairs are kept; "
    "transitivity gives the rest.", any_sign=True)

NET_WEIGHT_RECALL = Proof(
    "R@k = N / R with N = sum_d b_d (w_X(d) - w_Y(d)), w_X(d) = 1 when d is in X's top k and 0 "
    "otherwise, and R (the relevant documents of the collection) non-decreasing in every b_d.  Setting a "
    "document with w_X(d) <= w_Y(d) to grade 0 cannot lower N and cannot raise R; with N >= 0 the ratio "
    "cannot fall (if R falls to 0, d was the only relevant document, so N = w_X(d) - w_Y(d) <= 0 was 0 "
    "and the value stays 0).  This contains WORSE_ONLY for R@k.", any_sign=False)

RANK_DOMINANCE_CUT_COUNT = Proof(
    "R@k, Rprec and Rprec@k are C_c(X) / D, C_c the number of relevant documents among the first c "
    "ranks, where the cut c and the divisor D depend on R alone (R@k: c = k, D = R; Rprec: c = D = R; "
    "Rprec@k: c = D = min(k, R); the value is 0 when R = 0).  If r_X(d) <= r_X(e) and r_Y(d) >= r_Y(e) "
    "(absent: deeper than every rank) and grade(d) < grade(e), swapping the two grades keeps the "
    "multiset of grades, so R, c, D and every limit.  Of the pair, X's first c ranks hold both (the same "
    "two grades as before), only d (now the higher grade) or neither, since e among them implies d is: "
    "C_c(X) cannot fall.  Y's first c ranks hold both, only e (now the lower grade) or neither: C_c(Y) "
    "cannot rise.  This holds for every assignment, whatever the sign of the difference.  Only covering "
    "pairs are kept; transitivity gives the rest.", any_sign=True)
