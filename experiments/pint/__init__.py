"""PINT's experiments: path tracing's packets to decode (``figures``)."""
