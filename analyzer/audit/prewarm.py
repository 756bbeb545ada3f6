"""Imported once by the forkserver a LocalCluster's workers are forked from (``commands.audit.AUDIT_PREFORK``):
warms that process (:func:`analyzer.audit.warm.warm`) as it is imported, so every worker forked from it starts with
the kernels loaded and the caches made, and none spends its own second on them (its ``dask_setup`` sees the warm-up
done). Caches only, failures ignored, as in :mod:`analyzer.audit.warm`. Then the collector settles there
(:func:`analyzer.running.collector.settle`): every worker starts with the imports and the warm-up's caches out of its
collections, and collects as rarely as the command's own process."""

from analyzer.running import collector
from analyzer.audit import warm

warm.warm_quietly()
collector.settle()
