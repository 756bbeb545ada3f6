"""How work runs, below every layer that does the work: how many worker processes (:mod:`.jobs`), the process pools'
life (:mod:`.pools`), the stop signals (:mod:`.stops`), the cyclic collector's settings (:mod:`.collector`,
:mod:`.relaxed_gc`) and the Dask connection (:mod:`.dask`). Nothing here knows a game, a log or an analysis; each
module imports only the standard library at its top (Dask inside the functions that use it), so the command line can
import them before any heavy layer."""
