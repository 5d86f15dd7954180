<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform"><xsl:output method="text"/>
<xsl:template match="/"><xsl:for-each select="items/item"><xsl:sort select="@n" data-type="number"/><xsl:value-of select="concat(@n,'=',.,'&#10;')"/></xsl:for-each><xsl:value-of select="sum(items/item/@n)"/></xsl:template></xsl:stylesheet>
