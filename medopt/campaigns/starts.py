"""Where the adversarial search starts and how it moves (campaigns/search.py).

A :class:`Point` is one instance: two rankings, judgments, and how many relevant documents lie
outside both lists.  :class:`Generator` makes seeded structured starts (the pair shape of the greedy's
misses, permutations, near-permutations, short lists, random ones) and local moves (ranks,
judgments, outside documents), keeping at most ``max_unjudged`` unjudged documents so that every
point can be checked by enumeration.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from random import Random

OUTSIDE_MAX = 5  # relevant documents outside the lists: at most this many times k


@dataclass(frozen=True)
class Point:
    """One instance of the search: two rankings, judgments, and relevant documents outside both lists."""

    a: tuple
    b: tuple
    judged: tuple          # ((doc, grade), ...) for documents of the lists
    outside: int           # judged documents of grade ``rel`` (or the top grade) in neither list
    max_grade: int

    def judgments(self, outside_grade: int) -> dict:
        judgments = dict(self.judged)
        judgments.update({f"out{i}": outside_grade for i in range(self.outside)})
        return judgments

    def unjudged(self) -> list:
        judged = dict(self.judged)
        return [d for d in dict.fromkeys(self.a + self.b) if d not in judged]

    def size(self) -> tuple:
        """Smaller is simpler: documents in the lists, then unjudged ones, then outside ones."""
        return (len(set(self.a) | set(self.b)), len(self.unjudged()), self.outside)





class Generator:
    """Seeded structured instances at depth k (``grades``: the grades a judged document may have)."""

    def __init__(self, rng: Random, k: int, max_grade: int, max_unjudged: int):
        self.rng, self.k, self.max_grade, self.max_unjudged = rng, k, max_grade, max_unjudged
        self.counter = 0

    def fresh(self, count: int) -> list:
        docs = [f"d{self.counter + i}" for i in range(count)]
        self.counter += count
        return docs

    def grade(self) -> int:
        return self.rng.randint(0, self.max_grade)

    def outside(self) -> int:
        """Relevant documents outside both lists: none, a few, or many (they raise R, and the
        greedy's misses grow with them: docs/findings.md)."""
        return self.rng.choice((0, self.rng.randint(1, self.k), self.rng.randint(self.k, OUTSIDE_MAX * self.k)))

    def point(self, a, b, unjudged, outside=None) -> Point:
        judged = tuple((d, self.grade()) for d in dict.fromkeys(list(a) + list(b)) if d not in unjudged)
        if outside is None:
            outside = self.outside()
        return Point(tuple(a), tuple(b), judged, outside, self.max_grade)

    def shared(self, count: int) -> Point:
        """``count`` unjudged documents in both lists, closer together in a than in b, among judged
        documents that both lists hold in nearly the same order (one or two adjacent swaps), b
        sometimes with a judged document of its own at the end: the judged parts nearly tie, so the
        unjudged documents decide, and their interaction is what a one-flip rule cannot see."""
        rng, k = self.rng, self.k
        judged, special = self.fresh(k - count), self.fresh(count)
        first = rng.randrange(max(1, k - count - 1))
        gaps = [rng.randint(1, 2) for _ in range(count - 1)]
        a = list(judged)
        for offset, doc in zip([0] + gaps, special):
            first += offset
            a.insert(min(first, len(a)), doc)
        b = list(judged)
        for _ in range(rng.randint(1, 2)):
            i = rng.randrange(len(b) - 1)
            b[i], b[i + 1] = b[i + 1], b[i]
        own = self.fresh(1) if rng.random() < 0.6 else []
        b += own
        position = a.index(special[0]) + rng.randint(0, 1)
        for offset, doc in zip([0] + [g + rng.randint(1, 2) for g in gaps], special):
            position += offset
            b.insert(min(position, len(b)), doc)
        b = b[: k]
        density = rng.uniform(0.2, 0.6)
        grades = {d: (rng.randint(1, self.max_grade) if rng.random() < density else 0) for d in judged}
        grades.update({d: rng.randint(1, self.max_grade) if rng.random() < 0.8 else 0 for d in own})
        outside = self.outside()
        docs = set(a) | set(b)
        return Point(tuple(a), tuple(b), tuple((d, g) for d, g in grades.items() if d in docs), outside,
                     self.max_grade)

    def permuted_pair(self) -> Point:
        """Two unjudged documents among judged ones in a (one rank short of k), b a permutation of a's
        documents with a judged document of its own, the later of the two unjudged ranked higher in
        a than in b, and many relevant documents outside the lists: the family an exhaustive scan
        at k = 6 found the greedy's misses in (docs/findings.md)."""
        rng, k = self.rng, self.k
        a = self.fresh(k - 1)
        first, second = sorted(rng.sample(range(k - 1), 2))
        special = {a[first], a[second]}
        own = self.fresh(1)
        shuffle = rng.random() < 0.5  # b: any permutation, or a few moves away from a's order
        while True:
            b = a + own
            if shuffle:
                rng.shuffle(b)
            else:
                for _ in range(rng.randint(1, 4)):
                    b.insert(rng.randrange(len(b)), b.pop(rng.randrange(len(b))))
            later_b = max(b.index(d) for d in special)
            if later_b > second:  # the pair's interaction 1/r_a - 1/r_b is positive
                break
        density = rng.uniform(0.15, 0.45)
        grades = {d: (rng.randint(1, self.max_grade) if rng.random() < density else 0) for d in a if d not in special}
        grades[own[0]] = rng.randint(1, self.max_grade)
        outside = rng.randint(self.k, OUTSIDE_MAX * self.k)
        return Point(tuple(a), tuple(b), tuple(grades.items()), outside, self.max_grade)

    def near_permutation(self) -> Point:
        rng, k = self.rng, self.k
        a = self.fresh(k)
        b = list(a)
        for _ in range(rng.randint(1, 3)):
            if rng.random() < 0.5:
                i = rng.randrange(k - 1)
                b[i], b[i + 1] = b[i + 1], b[i]
            else:
                i, j = rng.randrange(k), rng.randrange(k)
                b.insert(j, b.pop(i))
        unjudged = set(rng.sample(a, min(k, rng.randint(2, self.max_unjudged))))
        return self.point(a, b, unjudged)

    def short_lists(self) -> Point:
        rng, k = self.rng, self.k
        pool = self.fresh(k + 2)
        a = rng.sample(pool, rng.randint(2, max(2, k - 1)))
        b = rng.sample(pool, rng.randint(2, max(2, k - 1)))
        docs = list(dict.fromkeys(a + b))
        unjudged = set(rng.sample(docs, min(len(docs), rng.randint(1, self.max_unjudged))))
        return self.point(a, b, unjudged)

    def random(self) -> Point:
        rng, k = self.rng, self.k
        pool = self.fresh(rng.randint(k, 2 * k))
        a, b = rng.sample(pool, k), rng.sample(pool, min(len(pool), k + rng.randint(-2, 2)))
        docs = list(dict.fromkeys(a + b))
        unjudged = set(rng.sample(docs, min(len(docs), rng.randint(1, self.max_unjudged))))
        return self.point(a, b, unjudged)

    def start(self, name: str) -> Point:
        if name == "permuted-pair":
            return self.permuted_pair()
        if name == "shared-pair":
            return self.shared(2)
        if name == "shared-triple":
            return self.shared(3)
        if name == "near-permutation":
            return self.near_permutation()
        if name == "short-lists":
            return self.short_lists()
        return self.random()

    # -- local moves ---------------------------------------------------------------
    def mutate(self, point: Point) -> Point:
        rng = self.rng
        a, b, judged = list(point.a), list(point.b), dict(point.judged)
        move = rng.randrange(7)
        if move == 0 and len(a) > 1:                        # swap two ranks of a
            i, j = rng.sample(range(len(a)), 2)
            a[i], a[j] = a[j], a[i]
        elif move == 1 and len(b) > 1:                      # swap two ranks of b
            i, j = rng.sample(range(len(b)), 2)
            b[i], b[j] = b[j], b[i]
        elif move == 2 and b:                               # move a document within b
            b.insert(rng.randrange(len(b)), b.pop(rng.randrange(len(b))))
        elif move == 3:                                     # a document judged / unjudged
            doc = rng.choice(list(dict.fromkeys(a + b)))
            if doc in judged:
                if len(point.unjudged()) < self.max_unjudged:
                    del judged[doc]
            else:
                judged[doc] = self.grade()
        elif move == 4 and judged:                          # another grade for a judged document
            judged[rng.choice(list(judged))] = self.grade()
        elif move == 5:                                     # relevant documents outside the lists
            change = rng.choice((-2, -1, 1, 2, point.outside, -(point.outside // 2)))
            return replace(point, outside=min(OUTSIDE_MAX * self.k, max(0, point.outside + change)))
        elif move == 6 and b:                               # a document of a into b, or a new one
            i = rng.randrange(len(b))
            choices = [d for d in a if d not in b]
            b[i] = rng.choice(choices) if choices and rng.random() < 0.5 else self.fresh(1)[0]
            if b[i] not in judged and b[i] not in a and len(point.unjudged()) >= self.max_unjudged:
                judged[b[i]] = self.grade()
        docs = set(a) | set(b)
        return replace(point, a=tuple(a), b=tuple(b), judged=tuple((d, g) for d, g in judged.items() if d in docs))
