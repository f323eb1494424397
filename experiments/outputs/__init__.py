"""What a run shows, drawn from the summaries without running a trial: the figures
(:mod:`.figures`, colours from :mod:`.styles`), Table 2 (:mod:`.tables`), the fidelity check
(:mod:`.fidelity`), the errata (:mod:`.errata`), the library comparison (:mod:`.libraries`), the
illustrations, the scorecard (:mod:`.scorecard`) with the papers' claims (:mod:`.claims`, judged by the
rules of :mod:`.claim_rules`) and the report page (:mod:`.report`)."""
