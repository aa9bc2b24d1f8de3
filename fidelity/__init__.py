"""DLIO version matrix and divergence reports (make fidelity)."""
