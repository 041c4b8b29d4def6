"""Citation parsing, under its former name: it moved to `vera._text._citations`, in the text layer
below judges and metrics, so the claim analysis reads citations without importing a metric;
re-exported here for existing imports."""
