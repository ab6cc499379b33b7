"""What several tasks share, in one place (no module here imports a task folder).

- ``root``: where benchmark files live (``--data-root``, ``$VLNEVAL_DATA``, the demo data);
- ``episodes``: the columnar :class:`~vlneval.tasks.common.episodes.EpisodeTable` every
  reader fills;
- ``predictions``, ``prediction_structs``: the predictions reader of the tasks whose
  predictions are viewpoint trajectories on the Matterport3D graphs (the R2R family; REVERIE,
  SOON, NDH, HANNA and Touchdown reuse it for their trajectories);
- ``inputs``: how a path, bytes or in-memory records are named, and tasks that need a path;
- ``request``: what a task's scorer is asked (:class:`~vlneval.tasks.common.request.SplitRequest`,
  ``ScoreOptions``, the ``TaskScorer`` protocol);
- ``arrays``, ``_steps``, ``checks``, ``scoring``: scoring arrays, profile rule checks and the
  batched scoring of graph trajectories;
- ``result``, ``protocol``: the typed :class:`~vlneval.tasks.common.result.Result` every
  scorer returns, and its protocol card.
"""
