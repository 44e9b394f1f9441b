"""Language-specific rules, one module per language they serve, apart from the method.

The small-model repairs of construction (fact grounding, the speaker check,
copies of turns, stated anchors, ...) read English words; for a
case whose turns are in another language they are switched off (``english.REPAIRS_OFF``) and the
build says so, rather than passing every check for want of a word they know.
"""
