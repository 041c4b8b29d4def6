"""Sentence segmentation, under its former name: it moved to `vera._text._segment` so that metrics
can split sentences without importing a judge; re-exported here for existing imports."""
