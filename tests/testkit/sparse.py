"""A sparse matrix that refuses to become dense: the tests' check that a mechanism never densifies
its input."""
import scipy.sparse


class NoDensifying(scipy.sparse.csr_matrix):
    """A CSR matrix whose every route to a dense array raises AssertionError("densified ...")."""

    def toarray(self, *args, **kwargs):
        raise AssertionError("densified with toarray")

    def todense(self, *args, **kwargs):
        raise AssertionError("densified with todense")

    def __array__(self, *args, **kwargs):
        raise AssertionError("densified with __array__")
