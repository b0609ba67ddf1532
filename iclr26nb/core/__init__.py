"Shared infrastructure of iclr26nb: runtime, params, train, plot, verdict, bench, registry, docs."
