"""The graph family: Matterport3D navigation graphs (``GraphNavEnv``, ``VectorGraphNavEnv``)."""
