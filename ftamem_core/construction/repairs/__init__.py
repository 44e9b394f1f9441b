"""The small-model repairs: checks that model text is about its evidence, and what a build does
when it is not."""
