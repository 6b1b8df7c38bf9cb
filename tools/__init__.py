"""Tools the model may call: typed async functions, declared from their signatures."""
