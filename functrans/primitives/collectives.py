"""(being written)"""
__all__ = []
