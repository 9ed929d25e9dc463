"""Stage 1, cards: the pinned source data, task cards, their repairs and the card audit."""
