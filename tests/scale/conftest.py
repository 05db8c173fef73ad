"""The LocalCluster the Dask tests share: two worker processes of one thread each, made once per
test module and closed after it."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def client():
    distributed = pytest.importorskip("distributed")  # in the test extra: CI fails if it is missing
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                       scheduler_port=0, dashboard_address=None, worker_dashboard_address=None)
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()
