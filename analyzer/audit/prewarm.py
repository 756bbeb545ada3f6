"""Imported once by the forkserver a LocalCluster's workers are forked from (``commands.audit.AUDIT_PREFORK``):
warms that process (:func:`analyzer.audit.warm.warm`) as it is imported, so every worker forked from it starts with
the kernels loaded and the caches made, and none spends its own second on them (its ``dask_setup`` sees the warm-up
done). Caches only, failures ignored, as in :mod:`analyzer.audit.warm`."""

from analyzer.audit import warm

warm.warm_quietly()
