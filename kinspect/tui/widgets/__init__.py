"""One widget per module; each shows what the app hands it and reports up by message."""
