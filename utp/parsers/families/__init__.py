"""One module per call family; each registers itself with @register_family."""
