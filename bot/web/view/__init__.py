"""What the pages draw from stored records: the investigation view, its timeline, SQL laid
out for reading."""
