"""Relevance models and the distribution of differences under them (SPEC 13): what is likely, beside
what is possible (the ranges of SPEC 7 and the flip distance of SPEC 11).

- :mod:`.models`: ``uniform(p=..)``, ``rank`` (fitted), probabilities files; ``parse_model``;
- :mod:`.distribution`: one topic's terms, exact moments, enumeration, the grid bounds, the sampler;
- :mod:`.scoring`: vectorised scores of many draws;
- :mod:`.compute`: ``difference_distribution`` (one topic), ``pair_distribution`` (the mean over topics)
  and the summary columns of ``compare --model``.
"""

from .columns import MODEL_COLUMNS, model_columns
from .compute import (difference_distribution, mean_distribution, pair_distribution, pair_terms, resolve_model,
                      topic_distribution)
from .distribution import DistributionResult, TopicTerms, topic_terms
from .models import FileModel, Model, RankModel, Uniform, fit_rank_model, parse_model, read_probabilities

__all__ = ["difference_distribution", "pair_distribution", "mean_distribution", "topic_distribution", "pair_terms",
           "resolve_model", "model_columns", "MODEL_COLUMNS", "DistributionResult", "TopicTerms", "topic_terms",
           "Model", "Uniform", "RankModel", "FileModel", "fit_rank_model", "parse_model", "read_probabilities"]
