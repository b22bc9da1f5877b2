# capi unit tests
