"""The page handlers, one module per page or family of pages."""
