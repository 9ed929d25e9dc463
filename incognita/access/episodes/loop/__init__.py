"""One episode, whoever plays it: the loop (episode_loop), the disclosure gate, the tool gateway,
the evaluation, the prompts, the plan a scripted agent is given and the records the loop writes.
The scripted participants (incognita.access.episodes.scripted) build on it; the harness
(incognita.access.episodes.harness) runs a block of episodes with both."""
