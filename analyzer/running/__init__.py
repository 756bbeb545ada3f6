"""How work runs, below every layer that does the work: how many worker processes (:mod:`.jobs`), the process pools'
life (:mod:`.pools`), the stop signals (:mod:`.stops`) and the cyclic collector's settings (:mod:`.collector`,
:mod:`.relaxed_gc`). Nothing here knows a game, a log or an analysis; each module imports only the standard library,
so the command line can import them before any heavy layer."""
