"""The rules of tiddlywinks: board types, the ETwA 2012 engine, scoring.

This package imports nothing else of the project: vision, calibration and
the service depend on it, never the reverse.

Modules
-------
board
    The shared domain types (Colour, Wink, Board) and the equipment in mm.
ruleset
    :class:`~rules.ruleset.Ruleset`, the ETwA 2012 rules as overridable
    methods, and the registry ``RULESETS`` / ``get_ruleset(name)``.
engine
    :class:`~rules.engine.Game`: fed one board per shot, it infers forfeits,
    passes, squop-up turns, the time and round limit, and the end of the game.
scoring
    Tiddlies (19.1), game points with shared ranks (19.2, 20.2), notation (F.3).
squidge_off
    Who starts (5.4).
replacement
    The mat's layout and the rule 13.1 spot for a wink that went off.
record, events
    RECORD.json and the announcements the engine makes.

Submodules are not imported here, so ``import rules.board`` stays light.
"""
