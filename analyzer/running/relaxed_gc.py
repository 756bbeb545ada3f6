"""Imported first by a process that only imports and forks (the forkserver a LocalCluster's workers are forked
from: :func:`analyzer.running.dask.start_forkserver`): its collector relaxed
(:func:`analyzer.running.collector.relax`) before the imports that follow, as the command line relaxes its own."""

from analyzer.running.collector import relax

relax()
