"""The decision brief: built from evaluations (:mod:`.build`), as text (:mod:`.text`), as HTML
(:mod:`.html`) and as the plain record a snapshot keeps (:mod:`.record`)."""
