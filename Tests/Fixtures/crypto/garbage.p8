this is not a key
nor a certificate, just text
