"""The experiment engine: a config read and checked (:mod:`.config`), expanded into cells, the
trials of a cell drawn from a data source (:mod:`.sources`) and run (:mod:`.trials`), their errors
(:mod:`.metrics`) summarised (:mod:`.summary`), and the files it writes (:mod:`.cell_files`,
:mod:`.atomic`, :mod:`.joblog`, :mod:`.availability`). Data sources, metrics and mechanism
families plug in through registries, so a new kind of experiment does not touch the engine."""
