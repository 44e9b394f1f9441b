"""The small-model repairs, apart from the method: checks that model text is about its evidence
(``grounding``), who said it (``speaker``), what a unit holds (``spans``), and the one interface
the builder calls (``checks.Repairs``)."""
