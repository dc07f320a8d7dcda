"""Corpus BLEU and modified n-gram precision (sacrebleu), success rate at k, perplexity.

BLEU is standard corpus BLEU (Papineni et al. 2002) as in the paper's Table 2 and Figure 2:
sacrebleu with `tokenize="none"` (the text is already normalised), case kept, 4-gram maximum
and no smoothing, so that p1..p4 are exactly the clipped-count precisions (in percent) and an
order with no match at all gives BLEU 0, as the original definition does.
"""

import math

from sacrebleu.metrics import BLEU

_BLEU = BLEU(tokenize="none", smooth_method="none", force=True)


def corpus_scores(hypotheses: list[str], references: list[str]) -> dict:
    """Corpus BLEU, p1..p4 and brevity penalty of one hypothesis per reference, in percent."""
    if len(hypotheses) != len(references):
        raise ValueError(f"{len(hypotheses)} hypotheses for {len(references)} references")
    score = _BLEU.corpus_score(hypotheses, [references])
    return {
        "bleu": score.score,
        "precisions": list(score.precisions),
        "bp": score.bp,
        "sys_len": score.sys_len,
        "ref_len": score.ref_len,
    }


def success_rate(suggestion_lists: list[list[str]], references: list[str], k: int) -> float:
    """Percentage of pairs whose reference is exactly one of the first k suggestions."""
    if len(suggestion_lists) != len(references):
        raise ValueError(f"{len(suggestion_lists)} suggestion lists for {len(references)} references")
    if not references:
        return 0.0
    hits = sum(ref in suggestions[:k] for suggestions, ref in zip(suggestion_lists, references))
    return 100.0 * hits / len(references)


def perplexity(total_nll: float, total_tokens: int) -> float:
    """exp of the mean negative log-likelihood (natural log) per target token."""
    if total_tokens <= 0:
        raise ValueError("perplexity needs at least one target token")
    return math.exp(total_nll / total_tokens)
